/**
 * Metrics: {@link io.rdmablock.mgmt.api.metrics.ApiMetrics}, the server's own Prometheus registry (requests,
 * durations, volumes and nodes by state, promotions), and the dashboard's live per-volume rates:
 * {@link io.rdmablock.mgmt.api.metrics.MetricsScraper} fetches the nodes' {@code /metrics} and
 * {@link io.rdmablock.mgmt.api.metrics.VolumeStats} turns the counters into rates.
 *
 * <p>May import: {@code cluster} (what is counted), {@code store}, mgmt-client, Prometheus, Vert.x (the scraper's
 * HTTP client). Never {@code http} (which serves these metrics).
 */
package io.rdmablock.mgmt.api.metrics;
