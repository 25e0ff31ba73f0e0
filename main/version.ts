import pkg from '../package.json' with { type: 'json' };

/** Corral's version (package.json), for `serve --version` and `GET /health`. */
export const CORRAL_VERSION: string = pkg.version;
