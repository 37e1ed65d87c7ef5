import { IsEmail, IsInt, Max, Min } from 'class-validator';

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
