/**
 * {@code rdmablock bench}: a load generator on the {@link io.rdmablock.initiator.BlockDevice} library with fio's
 * option names and meanings ({@link io.rdmablock.initiator.bench.JobOptions} lists them), fio job files run as
 * written apart from the engine line, trace replay, and fio-compatible JSON output. See docs/bench.md.
 *
 * <p>{@link io.rdmablock.initiator.bench.JobSpec} holds one job's options; {@link io.rdmablock.initiator.bench.JobFile}
 * parses job files; {@link io.rdmablock.initiator.bench.BenchRun} runs the jobs phase by phase (stonewall);
 * {@link io.rdmablock.initiator.bench.Worker} drives one job clone (one device, one queue pair) with
 * {@link io.rdmablock.initiator.bench.IoChooser} (offsets: the {@link io.rdmablock.initiator.bench.OffsetDistribution}
 * implementations mirror fio's generators), {@link io.rdmablock.initiator.bench.IoPacer} (rate, thinktime),
 * {@link io.rdmablock.initiator.bench.LatencyTarget} (the depth search) and
 * {@link io.rdmablock.initiator.bench.BlockVerifyState} (per-block write generations);
 * {@link io.rdmablock.initiator.bench.FioReport} prints the results.
 */
package io.rdmablock.initiator.bench;
