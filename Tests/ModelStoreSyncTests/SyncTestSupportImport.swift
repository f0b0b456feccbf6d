// The test models (Journey, Leg, Traveller), replicas and the model of the merge live in
// ModelStoreSyncTestSupport, which the PostgreSQL package's sync tests share; every file here sees them.
@_exported import ModelStoreSyncTestSupport
