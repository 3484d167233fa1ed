/**
 * The NVMe/TCP transport binding's wire structures, shared by target and host (NVM Express NVMe/TCP Transport
 * Specification 1.0, section 3.3 PDU formats, 3.4 connection setup, 3.6 digests and errors; Linux
 * {@code include/linux/nvme-tcp.h}): {@link io.rdmablock.rdma.fabric.tcp.PduHeader} (common header, types,
 * flags, the receive checks), {@link io.rdmablock.rdma.fabric.tcp.IcPdu} (ICReq/ICResp),
 * {@link io.rdmablock.rdma.fabric.tcp.CapsulePdu} (CapsuleCmd/CapsuleResp around the SQE and CQE of
 * {@link io.rdmablock.rdma.fabric}), {@link io.rdmablock.rdma.fabric.tcp.DataPdu} (H2CData, C2HData, R2T),
 * {@link io.rdmablock.rdma.fabric.tcp.TermPdu} (H2CTermReq/C2HTermReq, FES codes) and
 * {@link io.rdmablock.rdma.fabric.tcp.PduDigest} (CRC32C header and data digests). Like the RDMA descriptors, static
 * accessors over a {@link java.lang.foreign.MemorySegment} (little-endian), so PDUs are read and written in place.
 * Bad input is a {@link io.rdmablock.rdma.fabric.tcp.PduFormatException} carrying the FES and FEI to report.
 */
package io.rdmablock.rdma.fabric.tcp;
