import Foundation
import ModelStore
import Testing

extension Trait where Self == ConditionTrait {
    /// Skips a test that opens a container from a URL in code when `MODELSTORE_URL` is set for
    /// the test run, since the variable would replace that URL.
    public static var urlNotOverridden: Self {
        .disabled(
            if: StoreRegistry.resolve("memory:").isFromEnvironment,
            "MODELSTORE_URL is set for this run and would replace the URL the test opens")
    }
}
