package io.rdmablock.tools.device;

import static org.junit.jupiter.api.Assertions.*;

import io.rdmablock.initiator.local.FileBlockDevice;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

@Timeout(30)
class DeviceSourceTest {
    @TempDir
    Path dir;

    @Test
    void deviceOptionsShouldWantExactlyOneSource() {
        DeviceSource none = new DeviceSource();
        new CommandLine(none).parseArgs();
        assertThrows(IllegalArgumentException.class, () -> none.open(1));
        DeviceSource two = new DeviceSource();
        new CommandLine(two).parseArgs("--file", "/x", "--volume", "v");
        assertThrows(IllegalArgumentException.class, () -> two.open(1));
        DeviceSource file = new DeviceSource();
        FileBlockDevice.createFile(dir.resolve("f.img"), 4096);
        new CommandLine(file).parseArgs("--file", dir.resolve("f.img").toString(), "--direct=false");
        try (var d = file.open(1)) {
            assertEquals(4096, d.capacityBytes());
        }
    }
}
