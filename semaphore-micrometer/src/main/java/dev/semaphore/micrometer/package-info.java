/**
 * Micrometer meters for the semaphore library's primitives: {@link dev.semaphore.micrometer.SemaphoreMetrics}
 * binds one primitive, {@link dev.semaphore.micrometer.NamedSemaphoreMetrics} every named one. The meters,
 * their tags and their Prometheus names are listed in {@code docs/diagnostics.md}, "Metrics (Micrometer)".
 *
 * <p>Every type is null-marked: parameters and results are non-null unless annotated {@code @Nullable}.
 */
@NullMarked
package dev.semaphore.micrometer;

import org.jspecify.annotations.NullMarked;
