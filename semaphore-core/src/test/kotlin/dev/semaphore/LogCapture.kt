package dev.semaphore

import java.util.concurrent.CopyOnWriteArrayList
import java.util.logging.Handler
import java.util.logging.LogRecord
import java.util.logging.Logger

/**
 * Runs [block] with what the logger [name] (java.util.logging, which System.Logger uses here) logs collected
 * instead of printed, and returns the records: a test that provokes a log record asserts on it rather than showing
 * it in the build's output.
 */
internal inline fun capturingLog(name: String, block: () -> Unit): List<LogRecord> {
    val logger = Logger.getLogger(name)
    val records = CopyOnWriteArrayList<LogRecord>()
    val collector = object : Handler() {
        override fun publish(record: LogRecord) {
            records += record
        }
        override fun flush() {}
        override fun close() {}
    }
    val parents = logger.useParentHandlers
    logger.addHandler(collector)
    logger.useParentHandlers = false
    try {
        block()
    } finally {
        logger.removeHandler(collector)
        logger.useParentHandlers = parents
    }
    return records
}
