// The conformance suite is built in its own issue.
