import Foundation
import ModelStoreCommandLine

// `modelstore`: inspect, verify, convert, compact and repair ModelStore stores. See `Tool`.
exit(Tool.run(Array(CommandLine.arguments.dropFirst())))
