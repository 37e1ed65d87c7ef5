import { IsEmail, IsInt, IsNotEmpty, IsString, Max, MaxLength, Min } from 'class-validator';

/** Body of `POST /orders`. */
export class CreateOrderDto {
  @IsEmail()
  email!: string;

  @IsInt()
  @Min(1)
  amountCents!: number;
}

/** Body of `POST /inventory/outage`. */
export class SimulateOutageDto {
  @IsInt()
  @Min(0)
  @Max(100)
  failures!: number;
}

/** Body of `POST /inventory/stock`. */
export class SetStockDto {
  @IsInt()
  @Min(0)
  available!: number;
}

/** Body of `POST /webhooks/payments`, as the (imaginary) payment provider sends it. */
export class PaymentWebhookDto {
  /** The provider's event id: redeliveries of one event carry the same id. */
  @IsString()
  @IsNotEmpty()
  @MaxLength(255)
  eventId!: string;

  @IsInt()
  @Min(1)
  orderId!: number;

  @IsInt()
  @Min(1)
  amountCents!: number;
}
