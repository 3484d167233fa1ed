/**
 * The fabric layer shared by host and target: NVMe-over-Fabrics wire structures for the RDMA transport binding.
 *
 * <p>One descriptor class per wire structure, each a set of offset constants plus static accessors over a
 * {@link java.lang.foreign.MemorySegment} (little-endian, as NVMe), so capsules are read and written in place in
 * registered memory with no copy and no allocation:
 * {@link io.rdmablock.rdma.fabric.SqeDescriptor} (64-byte command capsule),
 * {@link io.rdmablock.rdma.fabric.CqeDescriptor} (16-byte response capsule),
 * {@link io.rdmablock.rdma.fabric.SglDescriptor} (keyed / in-capsule SGL data block descriptors),
 * {@link io.rdmablock.rdma.fabric.ConnectDataDescriptor} (1024-byte Connect data),
 * {@link io.rdmablock.rdma.fabric.CmPrivateData} (RDMA CM request/accept/reject private data),
 * {@link io.rdmablock.rdma.fabric.IdentifyControllerDescriptor}, {@link io.rdmablock.rdma.fabric.IdentifyNamespaceDescriptor},
 * {@link io.rdmablock.rdma.fabric.NvmeStatus} and {@link io.rdmablock.rdma.fabric.Opcodes}.
 *
 * <p>Sources: NVM Express Base Specification 2.0 (sections 3.3.3 SGL, 4.2 Submission Queue Entry, 4.6 Completion
 * Queue Entry, 5.17 Identify), NVM Command Set Specification 1.0, NVM Express over Fabrics 1.1 (3.3 Connect,
 * 3.4 Property Get/Set) and the NVMe/RDMA Transport Specification 1.0 (3.2 RDMA CM private data, 3.3 capsules).
 * Where rdmablock departs from them is listed in docs/wire-protocol.md.
 */
package io.rdmablock.rdma.fabric;
