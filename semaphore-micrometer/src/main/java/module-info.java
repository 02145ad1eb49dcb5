/**
 * Micrometer meters for the semaphore library's primitives: {@code SemaphoreMetrics.of(primitive)} binds
 * one primitive, {@code SemaphoreMetrics.allNamed()} every named one. Micrometer's types show in the API
 * ({@code MeterBinder}, {@code MeterRegistry}, {@code Tag}), so its module is required transitively, as
 * is the core's ({@code Inspectable}).
 */
module dev.semaphore.micrometer {
    requires transitive dev.semaphore.core;
    requires transitive micrometer.core;
    requires static transitive org.jspecify;
    requires static dev.semaphore.async; // optional: SemaphoreMetrics.of(AsyncInspectable) for the Java views

    exports dev.semaphore.micrometer;
}
