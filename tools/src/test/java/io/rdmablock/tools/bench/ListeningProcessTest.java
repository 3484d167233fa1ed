package io.rdmablock.tools.bench;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class ListeningProcessTest {

    @Test
    void shouldFindAnotherProcessListeningOnAPort() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")) || Files.isExecutable(Path.of("/bin/python3")),
                "python3 not installed: no child process to listen");
        Process p = new ProcessBuilder("python3", "-c", "import socket,time; s=socket.socket(); s.bind(('127.0.0.1',0));"
                + " s.listen(); print(s.getsockname()[1], flush=True); time.sleep(20)").start();
        try {
            int port = Integer.parseInt(new BufferedReader(new InputStreamReader(p.getInputStream())).readLine().strip());
            assertEquals(String.valueOf(p.pid()), ListeningProcess.pidListeningOn(port));
            ProcStat s = ProcStat.read(String.valueOf(p.pid()));
            assertNotNull(s);
            assertTrue(s.totalNs() >= 0);
        } finally {
            p.destroy();
            p.waitFor(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void shouldNotReportItselfOrAPortNobodyListensOn() throws Exception {
        try (ServerSocket own = new ServerSocket(0)) {
            assertNull(ListeningProcess.pidListeningOn(own.getLocalPort()));
        }
        assertTrue(ListeningProcess.isLoopback("127.0.0.1"));
        assertFalse(ListeningProcess.isLoopback("10.0.0.1"));
    }
}
