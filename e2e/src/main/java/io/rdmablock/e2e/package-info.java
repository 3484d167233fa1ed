/**
 * Nothing ships from this module: its tests run the initiator and its front-ends (CLI, NBD, bench) against
 * in-process storage nodes, across module boundaries. They live here, not in the initiator, so that no module
 * depends on another at test scope against the build order (the reactor has no cycle). The tests are all in this
 * package ({@code io.rdmablock.e2e}) and use only the modules' public API and their documented seams (for example
 * {@code NvmeBlockDevice.state()}, {@code reconnects()} and {@code submitRaw}) and the public helpers of their
 * test-jars ({@code DeviceChecks}, {@code RawNbdClient}): no module's internals.
 */
package io.rdmablock.e2e;
