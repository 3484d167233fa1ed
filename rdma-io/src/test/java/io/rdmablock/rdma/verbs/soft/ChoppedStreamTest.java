package io.rdmablock.rdma.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmablock.rdma.verbs.BurstSizesTest;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The soft provider's {@link Receiver} with its socket cut at chosen offsets ({@link ChoppedChannel}): TCP over
 * loopback delivers what was sent in large pieces, so a frame header split across reads, a payload cut one byte
 * before or after the 16 KiB copy threshold, or a frame ending exactly at the 64 KiB stage's end would otherwise be
 * left to chance. Each schedule runs {@link BurstSizesTest}'s burst (RDMA WRITE, SEND, RDMA READ of 1 B to 100,000 B
 * around every threshold) followed by 150 small and 4-8 KiB operations, and checks every byte placed.
 */
class ChoppedStreamTest {
    private static final int H = FrameDescriptor.HEADER_LENGTH;
    private static final int STAGE = Receiver.STAGE_BYTES;
    private static final int COPY = Receiver.COPY_MAX;

    static Stream<Arguments> schedules() {
        return Stream.of(
                Arguments.of("one byte per read", new int[] {1}),
                Arguments.of("around a frame header", new int[] {H - 1, H, H + 1, 1, 2 * H, H + 64, 7}),
                Arguments.of("around the copy threshold", new int[] {COPY - 1, COPY, COPY + 1, H + 4095, 4097, 3}),
                Arguments.of("around the stage's end", new int[] {STAGE - 1, STAGE, STAGE + 1, STAGE - H, H + 1,
                    STAGE - H + 1}),
                Arguments.of("random, seed 1", random(1)),
                Arguments.of("random, seed 2", random(2)),
                Arguments.of("random, seed 3", random(3)));
    }

    /** 64 read sizes, half of them 1..64 bytes, half 1..2 x the stage. */
    private static int[] random(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        return IntStream.range(0, 64).map(i -> i % 2 == 0 ? r.nextInt(1, 65) : r.nextInt(1, 2 * STAGE + 1)).toArray();
    }

    private static int[] sizes() {
        int[] base = BurstSizesTest.thresholdSizes();
        int[] small = {64, 4096, 16, 8192, 1, 4160};
        int[] all = Arrays.copyOf(base, base.length + 150);
        for (int i = 0; i < 150; i++) {
            all[base.length + i] = small[i % small.length];
        }
        return all;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("schedules")
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void shouldPlaceEveryByteWhereverTheStreamIsCut(String name, int[] schedule) {
        AtomicLong cuts = new AtomicLong();
        QpEngine.readFilter = ch -> new ChoppedChannel(ch, schedule, cuts);
        try {
            BurstSizesTest.placeBurst("soft", sizes());
        } finally {
            QpEngine.readFilter = null;
        }
        assertTrue(cuts.get() > 0, name + ": no read was cut (the hook is not on the receive path)");
    }
}
