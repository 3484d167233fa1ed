/**
 * Prometheus metrics of a storage node ({@code prometheus-metrics-core} 1.x) and their {@code /metrics} HTTP
 * endpoint. Data points are resolved once per label set so the data path only does lock-free adds.
 */
package io.rdmablock.node.metrics;
