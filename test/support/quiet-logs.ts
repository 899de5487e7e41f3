/**
 * Imported FIRST by the reliability tests, before any module builds a Powertools logger or metrics object:
 * under injected faults the consumer logs a line per failed claim, ledger write or completion (hundreds), and
 * the receiver an EMF document per delivery, which would bury the summary each test prints. The tests count
 * what matters themselves; RELIABILITY_LOG_LEVEL=WARN shows the logs again.
 */
process.env.POWERTOOLS_LOG_LEVEL = process.env.RELIABILITY_LOG_LEVEL ?? 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED = 'true';
