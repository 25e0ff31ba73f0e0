import { z } from 'zod';

/**
 * Where a repository resource goes. The API puts repositories under `/workspace/` (its default
 * is `/workspace/<repo-name>`), and Corral maps `/workspace/` to the session's work folder on
 * the hand. A path anywhere else was used as given — `/etc/x` on an SSH host, `../../x` out of
 * the work folder — which no client of the hosted API could expect: such paths are refused
 * with a 400 that names the field.
 */
export const WORKSPACE_PREFIX = '/workspace/';

/** Why a mount_path is refused, or undefined when it is a clean path under /workspace/. */
export function mountPathProblem(p: string): string | undefined {
  if (!p.startsWith(WORKSPACE_PREFIX)) return `must be an absolute path under ${WORKSPACE_PREFIX} (Corral's ${WORKSPACE_PREFIX} is the session's work folder on the hand)`;
  const rest = p.slice(WORKSPACE_PREFIX.length).replace(/\/$/, '');
  if (rest === '') return `must name a folder inside ${WORKSPACE_PREFIX}, not ${WORKSPACE_PREFIX} itself`;
  if (rest.split('/').some((s) => s === '' || s === '.' || s === '..')) return "must not contain empty, '.' or '..' segments";
  if (/[\0\n\r]/.test(rest)) return 'must not contain NUL or line breaks';
  return undefined;
}

/** The `mount_path` of a repository resource (see {@link mountPathProblem}). */
export const mountPath = z
  .string()
  .min(1)
  .max(4096)
  .superRefine((p, ctx) => {
    const problem = mountPathProblem(p);
    if (problem) ctx.addIssue({ code: 'custom', message: `mount_path ${problem}` });
  });
