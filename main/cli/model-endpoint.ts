/** Where the brains send model requests and where their key comes from (never the key). */
export interface ModelEndpoint {
  /** The endpoint, without credentials or query. */
  url: string;
  /** `ANTHROPIC_BASE_URL`, or the SDK's default. */
  urlSource: 'ANTHROPIC_BASE_URL' | 'default';
  /** `ANTHROPIC_API_KEY`, or none. */
  keySource: 'ANTHROPIC_API_KEY' | 'none';
  /** Set when ANTHROPIC_BASE_URL is not a URL. */
  problem?: string;
}

/** What the brains will use, read from the same variables brain/model.ts reads. */
export function modelEndpoint(env: NodeJS.ProcessEnv = process.env): ModelEndpoint {
  const keySource = env.ANTHROPIC_API_KEY ? 'ANTHROPIC_API_KEY' : 'none';
  const base = env.ANTHROPIC_BASE_URL;
  if (!base) return { url: 'https://api.anthropic.com', urlSource: 'default', keySource };
  if (!URL.canParse(base)) return { url: '(not a URL)', urlSource: 'ANTHROPIC_BASE_URL', keySource, problem: 'ANTHROPIC_BASE_URL is not a URL' };
  const u = new URL(base);
  // A URL can carry credentials (user:pass@) or a key in its query: show neither.
  return { url: `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`, urlSource: 'ANTHROPIC_BASE_URL', keySource };
}
