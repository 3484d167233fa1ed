/**
 * {@code rdmablock bench}: a load generator on the {@link io.rdmablock.initiator.BlockDevice} library with fio's
 * option names and meanings ({@link io.rdmablock.tools.bench.JobOptions} lists them), fio job files run as
 * written apart from the engine line, trace replay, and fio-compatible JSON output. See docs/bench.md.
 *
 * <p>{@link io.rdmablock.tools.bench.JobSpec} holds one job's options; {@link io.rdmablock.tools.bench.JobFile}
 * parses job files; {@link io.rdmablock.tools.bench.BenchRun} runs the jobs phase by phase (stonewall);
 * {@link io.rdmablock.tools.bench.Worker} drives one job clone (one device, one queue pair) with
 * {@link io.rdmablock.tools.bench.IoChooser} (offsets: the {@link io.rdmablock.tools.bench.OffsetDistribution}
 * implementations mirror fio's generators), {@link io.rdmablock.tools.bench.IoPacer} (rate, thinktime),
 * {@link io.rdmablock.tools.bench.LatencyTarget} (the depth search) and
 * {@link io.rdmablock.tools.bench.BlockVerifyState} (per-block write generations);
 * {@link io.rdmablock.tools.bench.FioReport} prints the results.
 *
 * <p>Owns the benchmark and nothing else. May import the initiator library's public API
 * ({@code io.rdmablock.initiator}, {@code io.rdmablock.initiator.local}), {@link io.rdmablock.tools.device} (how the
 * command opens its device), {@link io.rdmablock.tools.replay} (the trace formats {@code read_iolog} replays),
 * picocli and HdrHistogram; nothing of the storage node or the management server.
 */
package io.rdmablock.tools.bench;
