// The custom adapter sample; written by the samples issue.
