import ModelStore

/// A schema file that cannot be used: which file, where in the document (`models[2].name`), what
/// is wrong and how to fix it.
package struct SchemaFileError: Error, Equatable {
    /// The file as named on the command line.
    package var file: String
    /// The path in the document, such as `models[2].relationships[0].inverse`; empty for the whole file.
    package var path: String
    /// What is wrong, with names quoted in single quotes.
    package var problem: String
    /// How to fix it.
    package var remedy: String

    /// The failure the tool reports: exit status 7, code `invalidSchema`.
    package var toolError: ToolError {
        let place = path.isEmpty ? "" : " at '\(path)'"
        return ToolError(
            .failure, code: DataStoreError.Code.invalidSchema.name,
            "the schema file '\(file)' is invalid\(place): \(problem)", remedy: remedy)
    }
}

/// Builds the errors of one file.
package struct SchemaFileProblems {
    /// The file as named on the command line.
    package let file: String

    /// An error at `path`.
    package func error(_ path: String, _ problem: String, remedy: String) -> SchemaFileError {
        SchemaFileError(file: file, path: path, problem: problem, remedy: remedy)
    }
}
