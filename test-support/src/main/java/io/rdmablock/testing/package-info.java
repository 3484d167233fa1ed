/**
 * Test helpers shared by the modules' tests (consumed with {@code <scope>test</scope>}, never by main code):
 * {@link io.rdmablock.testing.Await} waits, bounded, for a condition another thread or process brings about;
 * {@link io.rdmablock.testing.ManualClock} is a {@code nanoTime} supplier a test steps by hand where logic depends
 * on time. JDK only; imports nothing from the project.
 */
package io.rdmablock.testing;
