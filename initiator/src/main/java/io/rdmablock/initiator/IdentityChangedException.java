package io.rdmablock.initiator;

/**
 * The target answers for something other than what the device was opened on (another controller serial, another
 * namespace NGUID, another LBA size under the same subnqn): resubmitting held I/O would read or write the wrong data,
 * so the device is lost at once ({@link ReconnectPolicy#isPermanent}).
 */
final class IdentityChangedException extends BlockIoException {
    IdentityChangedException(String message) {
        super(message);
    }
}
