package io.rdmablock.rdma.verbs.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.PaddingLayout;
import java.lang.foreign.StructLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Compares {@link NativeStructs} with the installed rdma-core headers: {@code src/test/c/ffm_layouts.c} is compiled
 * with gcc and prints {@code sizeof} and {@code offsetof}/field size of every field the provider uses.
 */
class FfmLayoutsTest {
    /** struct name -> (field path or "sizeof") -> {offset, size} ({offset = size} for sizeof). */
    private static final Map<String, Map<String, long[]>> C = new HashMap<>();
    /** "const" lines: enum values, flags, and offsets of union arms the Java layouts do not name. */
    private static final Map<String, Long> CONST = new HashMap<>();

    @BeforeAll
    static void compileAndRun() throws Exception {
        String exe = Gcc.OUT.resolve("ffm_layouts").toString();
        Gcc.compile("-Wall", "-o", exe, Gcc.SRC.resolve("ffm_layouts.c").toString());
        String out = Gcc.run(List.of(exe), 30);
        assertNotNull(out, "ffm_layouts failed: " + Gcc.lastOutput());
        for (String line : out.split("\n")) {
            String[] f = line.trim().split(" ");
            if (f.length == 3 && f[0].equals("const")) {
                CONST.put(f[1], Long.parseLong(f[2]));
            } else if (f.length == 3 && f[1].equals("sizeof")) {
                C.computeIfAbsent(f[0], k -> new HashMap<>()).put("sizeof", new long[] {Long.parseLong(f[2])});
            } else if (f.length == 4) {
                C.computeIfAbsent(f[0], k -> new HashMap<>())
                        .put(f[1], new long[] {Long.parseLong(f[2]), Long.parseLong(f[3])});
            } else if (!line.isBlank()) {
                fail("unexpected line from ffm_layouts: " + line);
            }
        }
    }

    @Test
    void everyFieldPrintedByTheHeadersHasTheSameOffsetAndSizeInJava() {
        List<String> mismatches = new ArrayList<>();
        for (var struct : C.entrySet()) {
            StructLayout layout = NativeStructs.ALL.get(struct.getKey());
            assertNotNull(layout, "no Java layout for struct " + struct.getKey());
            for (var field : struct.getValue().entrySet()) {
                if (field.getKey().equals("sizeof")) {
                    continue;
                }
                String[] path = field.getKey().split("\\.");
                long offset;
                long size;
                try {
                    offset = NativeStructs.off(layout, path);
                    size = select(layout, path).byteSize();
                } catch (IllegalArgumentException e) {
                    mismatches.add(struct.getKey() + "." + field.getKey() + ": missing in the Java layout");
                    continue;
                }
                long[] c = field.getValue();
                if (offset != c[0] || size != c[1]) {
                    mismatches.add(struct.getKey() + "." + field.getKey() + ": C offset=" + c[0] + " size=" + c[1]
                            + ", Java offset=" + offset + " size=" + size);
                }
            }
        }
        assertTrue(mismatches.isEmpty(), "layout mismatches:\n" + String.join("\n", mismatches));
    }

    @Test
    void opcodesFlagsAndUnionArmsMatchTheHeaders() {
        String[] wr = {"IBV_WR_RDMA_WRITE", "IBV_WR_RDMA_WRITE_WITH_IMM", "IBV_WR_SEND", "IBV_WR_SEND_WITH_IMM",
                "IBV_WR_RDMA_READ", "IBV_WR_SEND_WITH_INV"};
        assertEquals(io.rdmablock.rdma.verbs.WrOpcode.values().length, wr.length, "one header name per WrOpcode");
        for (int i = 0; i < wr.length; i++) {
            assertEquals(io.rdmablock.rdma.verbs.WrOpcode.values()[i].name(), wr[i].substring("IBV_WR_".length()));
            assertEquals(CONST.get(wr[i]), (long) NativeStructs.IBV_WR_OPCODE[i], wr[i]);
        }
        assertEquals(CONST.get("IBV_WC_WITH_IMM"), (long) NativeStructs.IBV_WC_WITH_IMM);
        assertEquals(CONST.get("IBV_WC_WITH_INV"), (long) NativeStructs.IBV_WC_WITH_INV);
        assertEquals(CONST.get("IBV_DEVICE_MEM_MGT_EXTENSIONS"), (long) NativeStructs.IBV_DEVICE_MEM_MGT_EXTENSIONS);
        assertEquals(CONST.get("offsetof.ibv_send_wr.invalidate_rkey"),
                NativeStructs.off(NativeStructs.IBV_SEND_WR, "imm_data"), "invalidate_rkey shares imm_data's union");
        assertEquals(CONST.get("offsetof.ibv_wc.invalidated_rkey"),
                NativeStructs.off(NativeStructs.IBV_WC, "imm_data"), "invalidated_rkey shares imm_data's union");
    }

    @Test
    void completeStructsHaveTheHeaderSizeAndPartialOnesFitInsideIt() {
        for (var e : NativeStructs.ALL.entrySet()) {
            Map<String, long[]> c = C.get(e.getKey());
            assertNotNull(c, "ffm_layouts.c does not print struct " + e.getKey());
            long cSize = c.get("sizeof")[0];
            long javaSize = e.getValue().byteSize();
            if (NativeStructs.PARTIAL.contains(e.getKey())) {
                assertTrue(javaSize <= cSize, e.getKey() + ": partial Java layout " + javaSize + " > sizeof " + cSize);
            } else {
                assertEquals(cSize, javaSize, e.getKey() + ": sizeof");
            }
        }
    }

    @Test
    void everyNamedJavaFieldIsCheckedAgainstTheHeaders() {
        List<String> unchecked = new ArrayList<>();
        for (var e : NativeStructs.ALL.entrySet()) {
            collect(e.getKey(), "", e.getValue(), unchecked);
        }
        assertTrue(unchecked.isEmpty(), "Java fields that ffm_layouts.c does not print: " + unchecked);
    }

    private void collect(String struct, String prefix, GroupLayout group, List<String> unchecked) {
        for (MemoryLayout m : group.memberLayouts()) {
            if (m instanceof PaddingLayout || m.name().isEmpty()) {
                continue;
            }
            String path = prefix + m.name().get();
            boolean inC = C.getOrDefault(struct, Map.of()).containsKey(path);
            if (m instanceof GroupLayout g) {
                // a group is covered when it is printed itself or when all its named members are
                if (!inC) {
                    collect(struct, path + ".", g, unchecked);
                }
                continue;
            }
            if (!inC) {
                unchecked.add(struct + "." + path);
            }
        }
    }

    private static MemoryLayout select(MemoryLayout layout, String[] path) {
        MemoryLayout.PathElement[] elements = new MemoryLayout.PathElement[path.length];
        for (int i = 0; i < path.length; i++) {
            elements[i] = MemoryLayout.PathElement.groupElement(path[i]);
        }
        return layout.select(elements);
    }
}
