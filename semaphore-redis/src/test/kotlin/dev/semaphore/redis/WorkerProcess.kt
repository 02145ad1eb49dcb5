package dev.semaphore.redis

import dev.semaphore.testing.JvmProcess

/** A [Worker] in its own JVM; its stdout lines are collected as they come. */
class WorkerProcess(vararg args: String) : JvmProcess(Worker::class.java.name, args.toList())
