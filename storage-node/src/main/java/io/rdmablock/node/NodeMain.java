package io.rdmablock.node;

import picocli.CommandLine;

/** Entry point of a stand-alone storage node: {@code java -cp ... io.rdmablock.node.NodeMain --data-dir ...}. */
public final class NodeMain {
    private NodeMain() {
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new NodeCommand()).execute(args));
    }
}
