/**
 * Block-trace replay with verification against a model of what was written: every read is checked against the
 * data the model says the last write to each sector left there (zeroes where nothing was written).
 */
package io.rdmablock.initiator.replay;
