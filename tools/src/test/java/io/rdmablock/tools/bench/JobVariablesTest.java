package io.rdmablock.tools.bench;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * fio's substitutions in job files ({@link JobVariables}) against fio 3.33 itself: the values fio reports in its JSON
 * "job options" for {@code ${VAR}} (set and unset), {@code $pagesize}, {@code $mb_memory}, {@code $ncpus} and math.
 */
@Timeout(60)
class JobVariablesTest {
    @TempDir
    Path dir;

    static final JobVariables.Keywords KW = new JobVariables.Keywords(4096, 1000, 2);

    static String expand(String key, String v, Map<String, String> env, Set<String> unset) {
        return JobVariables.expand(key, v, env::get, KW, unset);
    }

    @Test
    void shouldSubstituteVariablesKeywordsAndMathAsBcDoes() {
        Set<String> unset = new TreeSet<>();
        assertEquals("8k", expand("bs", "${FIO_BS}", Map.of("FIO_BS", "8k"), unset));
        assertEquals("", expand("bs", "${FIO_BS}", Map.of(), unset));
        assertEquals(Set.of("FIO_BS"), unset);
        assertEquals("x-y", expand("name", "${A}-${B}", Map.of("A", "x", "B", "y"), unset));
        assertEquals("4096", expand("bs", "$pagesize", Map.of(), unset));
        assertEquals("8192", expand("bs", "$pagesize*2", Map.of(), unset));
        assertEquals("655360000", expand("size", "5*1024*1024*$mb_memory/8", Map.of(), unset));
        assertEquals("33554432", expand("size", "8*1024*$pagesize", Map.of(), unset));
        assertEquals("2", expand("numjobs", "$ncpus", Map.of(), unset));
        assertEquals("3", expand("numjobs", "($ncpus+4)/2", Map.of(), unset)); // bc truncates
        // the results of `echo ... | bc`: ^ right-associative and above *, unary minus above ^
        assertEquals("2000", expand("x", "2^3^0*$mb_memory-2*(-500)-1000", Map.of(), unset));
        assertEquals("4", expand("x", "-2^2+$ncpus*0", Map.of(), unset));
        assertEquals("1", expand("x", "$ncpus*0+7%3", Map.of(), unset));
        assertEquals("4k-1-2", expand("x", "4k-1-2", Map.of(), unset)); // no keyword: no math, as fio
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> expand("size", "$pagesize*2k", Map.of(), unset));
        assertTrue(e.getMessage().startsWith("invalid size: '$pagesize*2k'"), e.getMessage());
    }

    @Test
    void shouldGiveTheValuesFioGives() throws Exception {
        LocalFio.assumeInstalled();
        String text = """
                [j]
                ioengine=null
                rw=read
                bs=${JV_BS}
                size=8*$pagesize
                numjobs=$ncpus
                description=m${JV_UNSET}x
                """;
        Path f = dir.resolve("v.fio");
        Files.writeString(f, text);
        Path out = dir.resolve("out.json");
        List<String> cmd = new ArrayList<>(List.of(LocalFio.FIO.toString(), "--output-format=json",
                "--output=" + out, f.toString()));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true);
        pb.environment().put("JV_BS", "8k");
        pb.environment().remove("JV_UNSET");
        Process p = pb.start();
        p.getInputStream().readAllBytes();
        assertTrue(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS));
        String json = Files.readString(out);
        JobVariables.Keywords sys = JobVariables.systemKeywords();
        List<JobFile.Section> ours = JobFile.parse(List.of(text.split("\n")), k -> k.equals("JV_BS") ? "8k" : null,
                sys, new TreeSet<>());
        Map<String, String> o = ours.getFirst().options();
        for (String k : List.of("bs", "size", "numjobs", "description")) {
            assertTrue(json.matches("(?s).*\"" + k + "\" : \"" + java.util.regex.Pattern.quote(o.get(k)) + "\".*"),
                    k + "=" + o.get(k) + " not in fio's " + json);
        }
        assertEquals(String.valueOf(8 * sys.pagesize()), o.get("size"));
    }
}
