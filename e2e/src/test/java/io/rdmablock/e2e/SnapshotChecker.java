package io.rdmablock.e2e;

import java.util.ArrayList;
import java.util.List;

/**
 * Checks one copy's image of a snapshot against the {@link SnapshotHistory} of its volume's writes. The image is
 * given as the sequence each block holds ({@link BlockStamps#decode}: 0 never written, -1 a bad stamp). With
 * {@code request} the tick taken just before the snapshot was asked for and {@code complete} one taken once it was
 * seen ready, every block {@code b} holding version {@code v(b)} must satisfy:
 * <ul>
 *   <li><b>intact</b>: a good stamp of a version written to that block ({@code corrupt} otherwise);</li>
 *   <li><b>not too new</b>: {@code v(b)} was issued before {@code complete};</li>
 *   <li><b>not too old</b>: {@code v(b)} is at least the last version of {@code b} acknowledged before
 *       {@code request};</li>
 *   <li><b>one cut</b>: let {@code T} be the latest issue tick of any version the image holds; then {@code v(b)} is
 *       at least the last version of {@code b} acknowledged before {@code T}. Equivalently, for any two writes A
 *       (to block a) and B (to block b) with A acknowledged before B was issued: if the image holds B or a later
 *       version of b, it holds A or a later version of a. This is what a cut of the write stream at one point
 *       guarantees whatever was in flight (a write in flight at the cut may be in or out); a block from "after" a
 *       write that is missing breaks it (a torn cut).</li>
 * </ul>
 * Blocks never written by the load are not in the history and are not checked here (byte identity across copies
 * covers the whole image).
 */
final class SnapshotChecker {
    private SnapshotChecker() {
    }

    /** Problems found in one image; {@link #clean} when none. */
    record Result(int corrupt, int tooNew, int tooOld, int torn, List<String> first) {
        boolean clean() {
            return corrupt == 0 && tooNew == 0 && tooOld == 0 && torn == 0;
        }

        @Override
        public String toString() {
            return clean() ? "one cut within its bounds" : "corrupt=" + corrupt + " too_new=" + tooNew + " too_old="
                    + tooOld + " torn=" + torn + " first: " + first;
        }
    }

    static Result check(SnapshotHistory h, long request, long complete, long[] image) {
        int corrupt = 0, tooNew = 0, tooOld = 0, torn = 0;
        List<String> first = new ArrayList<>();
        long cut = 0; // T: the latest issue among the versions held
        int cutBlock = -1;
        for (int b = 0; b < h.blocks(); b++) {
            long v = image[b];
            if (v < 0 || !h.written(b, v)) {
                corrupt++;
                note(first, "block " + b + " holds " + (v < 0 ? "a bad stamp" : "version " + v + ", never written"));
            } else if (h.issuedAt(b, v) >= complete) {
                tooNew++;
                note(first, "block " + b + " holds version " + v + ", issued at tick " + h.issuedAt(b, v)
                        + ", after the snapshot was ready (tick " + complete + ")");
            } else if (h.issuedAt(b, v) > cut) {
                cut = h.issuedAt(b, v);
                cutBlock = b;
            }
        }
        for (int b = 0; b < h.blocks(); b++) {
            long v = image[b];
            if (v < 0 || !h.written(b, v)) {
                continue;
            }
            long old = h.lastAckedBefore(b, request);
            if (v < old) {
                tooOld++;
                note(first, "block " + b + " holds version " + v + ", but " + old + " was acknowledged (tick "
                        + h.ackedAt(b, old) + ") before the snapshot was requested (tick " + request + ")");
                continue;
            }
            long need = h.lastAckedBefore(b, cut);
            if (v < need) {
                torn++;
                note(first, "torn: block " + b + " holds version " + v + ", but " + need + " was acknowledged (tick "
                        + h.ackedAt(b, need) + ") before block " + cutBlock + "'s version " + image[cutBlock]
                        + ", which the image holds, was issued (tick " + cut + ")");
            }
        }
        return new Result(corrupt, tooNew, tooOld, torn, first);
    }

    private static void note(List<String> first, String p) {
        if (first.size() < 3) {
            first.add(p);
        }
    }
}
