/**
 * Reading {@code -D} system-property knobs for the processes' configuration homes ({@link
 * io.rdmablock.rdma.config.Knobs}); docs/configuration.md lists every knob.
 */
package io.rdmablock.rdma.config;
