package io.rdmablock.mgmt.api.store;

class InMemoryMetadataStoreContractTest extends MetadataStoreContract {
    @Override
    MetadataStore open() {
        return new InMemoryMetadataStore();
    }
}
