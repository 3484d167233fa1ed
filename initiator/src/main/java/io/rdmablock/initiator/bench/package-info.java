/**
 * {@code rdmablock bench}: a load generator on the {@link io.rdmablock.initiator.BlockDevice} library with fio's
 * option names and meanings (the subset rw, rwmixread, bs, bssplit, iodepth, numjobs, size, offset, runtime,
 * time_based, ramp_time, verify), fio job files limited to that subset, trace replay, and fio-compatible JSON output.
 *
 * <p>{@link io.rdmablock.initiator.bench.JobSpec} holds one job's options; {@link io.rdmablock.initiator.bench.JobFile}
 * parses job files; {@link io.rdmablock.initiator.bench.Worker} drives one job clone (one device, one queue pair);
 * {@link io.rdmablock.initiator.bench.FioReport} prints the results.
 */
package io.rdmablock.initiator.bench;
