import ModelStore

/// Small text helpers for the reports people read (the core's `ReportFormat`).
typealias Formatting = ReportFormat
