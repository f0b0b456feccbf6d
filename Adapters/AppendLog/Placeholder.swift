// The ModelStoreAppendLog adapter is built in its own issue.
