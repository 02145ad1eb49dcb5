package dev.semaphore.async;

import dev.semaphore.Deadlock;
import dev.semaphore.HoldInfo;
import dev.semaphore.Inspectable;
import dev.semaphore.SemaphoreListener;
import dev.semaphore.WaitInfo;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * The listener that the {@code observed} test execution (semaphore-java-api/pom.xml) adds to every primitive
 * through {@code -Ddev.semaphore.diagnostics=...,listener=dev.semaphore.async.ObservingListener}: it reads every
 * event (who, in words and as fields, and its times; a stack is made only for a listener that reads it), so that
 * the whole suite runs with events delivered on every path.
 */
public final class ObservingListener implements SemaphoreListener {
    /** Events read in this JVM. */
    static final AtomicLong EVENTS = new AtomicLong();

    /** Made by the core, by name, from the system property. */
    public ObservingListener() {}

    @Override
    public void onAcquired(Inspectable primitive, HoldInfo hold, Duration waited) {
        read(hold.holder(), hold.since(), waited);
    }

    @Override
    public void onReleased(Inspectable primitive, HoldInfo hold) {
        read(hold.holder(), hold.caller().kind(), hold.held());
    }

    @Override
    public void onRefused(Inspectable primitive, int permits) {
        read(primitive.getName(), permits, null);
    }

    @Override
    public void onTimedOut(Inspectable primitive, WaitInfo request) {
        read(request.requester(), request.since(), request.deadline());
    }

    @Override
    public void onCancelled(Inspectable primitive, WaitInfo request) {
        read(request.requester(), request.waited(), request.deadline());
    }

    @Override
    public void onClosed(Inspectable primitive, @Nullable Throwable cause, int failedRequests) {
        read(cause, failedRequests, null);
    }

    @Override
    public void onLongHold(Inspectable primitive, HoldInfo hold) {
        read(hold.toString(), hold.held(), null);
    }

    @Override
    public void onDeadlock(Inspectable primitive, Deadlock deadlock) {
        read(deadlock.toString(), null, null);
    }

    private static void read(@Nullable Object a, @Nullable Object b, @Nullable Object c) {
        EVENTS.addAndGet((Objects.hashCode(a) ^ Objects.hashCode(b) ^ Objects.hashCode(c)) & 1L | 1L);
    }
}
