/**
 * Block-trace replay exactly as written (msn, SNIA/MSR Cambridge CSV and blkparse text: {@link
 * io.rdmablock.tools.replay.TraceFormat}), with verification against a model of what was written: every read is
 * checked against the data the model says the last write to each 512-byte sector left there (zeroes where nothing
 * was written). Requests the LBA size does not divide are carried out with read-modify-write and counted; see
 * docs/bench.md.
 *
 * <p>Owns the trace formats, the sector model and {@code rdmablock replay}. May import the initiator library's public
 * API, {@link io.rdmablock.tools.device}, picocli, HdrHistogram and the management client's {@code Json} (JSON output);
 * no other tool package ({@link io.rdmablock.tools.bench} imports
 * this one, not the reverse).
 */
package io.rdmablock.tools.replay;
