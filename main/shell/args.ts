/** The value of `--data DIR` or `--data=DIR` in a command line, if present. */
export function dataDirFlag(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--data') {
      const next = argv[i + 1];
      return next && !next.startsWith('--') ? next : undefined;
    }
    if (arg?.startsWith('--data=')) return arg.slice('--data='.length) || undefined;
  }
  return undefined;
}
