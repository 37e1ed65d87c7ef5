import { IsInt, IsNotEmpty, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { DEFAULT_CAMPAIGN_SUBSCRIBERS } from './campaign.settings';

/** Body of `POST /campaigns`. */
export class CreateCampaignDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name!: string;

  /** How many fake subscribers to seed (`subscriber-<n>@example.com`). */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(100_000)
  subscribers: number = DEFAULT_CAMPAIGN_SUBSCRIBERS;
}
