import Foundation
import Testing
@testable import ModelStoreJSONFile

struct JSONScannerTests {
}
