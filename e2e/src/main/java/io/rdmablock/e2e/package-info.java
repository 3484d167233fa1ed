/**
 * Nothing ships from this module: its tests run the initiator and its front-ends (CLI, NBD, bench) against
 * in-process storage nodes, across module boundaries. They live here, not in the initiator, so that no module
 * depends on another at test scope against the build order (the reactor has no cycle). The tests keep the Java
 * packages of the code they exercise ({@code io.rdmablock.initiator...}), which gives them the package-private seams
 * they had before; there is no JPMS in the build, so split packages on the class path are fine.
 */
package io.rdmablock.e2e;
