/** Benchmarks of the verbs providers (main classes that print figures; not tests). */
package io.rdmablock.rdma.verbs.bench;
