/** Base of every failure the generator reports deliberately; `code` is stable for callers. */
export class GeneratorError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The settings are invalid; `problems` lists every one, each starting with its path. */
export class SettingsError extends GeneratorError {
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super('INVALID_SETTINGS', formatProblems(`Invalid settings (${source})`, problems));
  }
}

/** A certificate or key in the configuration directory is unusable; each problem names its file. */
export class CertificateError extends GeneratorError {
  constructor(readonly problems: string[]) {
    super('INVALID_CERTIFICATE', formatProblems('Unusable TLS certificate', problems));
  }
}

/** Renders a headline and a bullet list, the shape every multi-problem error uses. */
export function formatProblems(headline: string, problems: string[]): string {
  const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
  return [
    `${headline}: ${count}`,
    ...problems.map((p) => `  - ${p.replaceAll('\n', '\n    ')}`),
  ].join('\n');
}
