//! The analysis: every scenario in a folder run and reported into reports/analysis/.
