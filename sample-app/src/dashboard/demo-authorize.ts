import type { DashboardAuthorizationContext } from 'nestjs-geneva-drive/dashboard';

/**
 * DEMO ONLY, not access control: lets whoever connects from this machine (loopback) see and
 * operate the dashboard, and nobody else. A real app checks its own session or token here, e.g.
 * `request.user?.roles.includes('ops')`, and may allow `view` to more people than writes.
 */
export function demoAuthorize({ request }: DashboardAuthorizationContext): boolean {
  const address = (request as { socket?: { remoteAddress?: string } }).socket?.remoteAddress;
  return address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1';
}
