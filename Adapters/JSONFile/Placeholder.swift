// The ModelStoreJSONFile adapter is built in its own issue.
