export class CreateThingDto {
  name: string;
}
