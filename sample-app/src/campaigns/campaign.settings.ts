/**
 * `maxIterations` of `CampaignWorkflow.sendEmails`: after this many subscribers (checkpoints) the
 * execution ends `completed/continued` and a successor execution carries on from the cursor, so no
 * single BullMQ job runs for long. A decorator option, read once when the workflow class is defined
 * (env `CAMPAIGN_MAX_ITERATIONS`, default 500); the library rejects a non-positive value at boot.
 */
export const CAMPAIGN_MAX_ITERATIONS = Number(process.env.CAMPAIGN_MAX_ITERATIONS ?? 500);

/** Subscribers seeded by `POST /campaigns` when the body gives no count. */
export const DEFAULT_CAMPAIGN_SUBSCRIBERS = 5000;

/** Rows per INSERT when seeding subscribers (2 parameters a row, far below PostgreSQL's 65535). */
export const SUBSCRIBER_INSERT_CHUNK = 1000;
