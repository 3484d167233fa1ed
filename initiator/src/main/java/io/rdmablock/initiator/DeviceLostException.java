package io.rdmablock.initiator;

/** The controller was lost (controller-loss timeout expired, or the device was closed) with this I/O outstanding. */
public class DeviceLostException extends BlockIoException {
    public DeviceLostException(String message) {
        super(message);
    }
}
