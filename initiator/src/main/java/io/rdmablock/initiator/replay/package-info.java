/**
 * Block-trace replay exactly as written (msn, SNIA/MSR Cambridge CSV and blkparse text: {@link
 * io.rdmablock.initiator.replay.TraceFormat}), with verification against a model of what was written: every read is
 * checked against the data the model says the last write to each 512-byte sector left there (zeroes where nothing
 * was written). Requests the LBA size does not divide are carried out with read-modify-write and counted; see
 * docs/bench.md.
 */
package io.rdmablock.initiator.replay;
