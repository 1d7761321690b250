// Type-checked (tsc --noEmit, strict) against the types openapi-typescript generates from our
// /openapi.json by .ci/openapi: what a TypeScript integrator writes must compile, and what the
// description forbids must not (each @ts-expect-error fails the check if it stops failing).
import type { components, operations } from "./schema";

type Schemas = components["schemas"];
type Order = Schemas["Order"];
type OrderStatus = Schemas["OrderStatusValue"];
type ErrorBody = Schemas["Error"];

type Json<O, S extends keyof O> = O[S] extends { content: { "application/json": infer B } } ? B : never;
type Responses<K extends keyof operations> = operations[K]["responses"];

// Each status of the lifecycle, exhaustively: a new status breaks this switch.
export function nextStatuses(status: OrderStatus): OrderStatus[] {
  switch (status) {
    case "pending":
      return ["paid", "cancelled"];
    case "paid":
      return ["partially_shipped", "shipped", "refunded"];
    case "partially_shipped":
      return ["shipped", "refunded"];
    case "shipped":
      return ["delivered"];
    case "delivered":
      return ["refunded"];
    case "partially_refunded":
      return ["partially_shipped", "shipped", "delivered", "refunded"];
    case "cancelled":
    case "refunded":
      return [];
    default: {
      const unknown: never = status;
      return unknown;
    }
  }
}

// Nullable references keep their type: an erased address is null, else a real address.
export function shipsTo(order: Order): string {
  const address = order.shipping_address;
  return address === null ? "(erased)" : `${address.city}, ${address.country}`;
}

export const erased: Order["shipping_address"] = null;
export const unpaid: Order["payment"] = null;

// Always-present fields are not optional: no `undefined` to handle.
export function summary(order: Order): string {
  const paid = order.payment?.status ?? "no payment";
  return `${order.number} ${order.status} ${order.total_cents} ${order.currency} ${paid}`;
}

// Success and error bodies are told apart by status, each typed.
type Checkout = Responses<"checkout">;
export const placed: Json<Checkout, 201> extends Order ? true : false = true;
export const replayed: Json<Checkout, 200> extends Order ? true : false = true;
export const conflict: Json<Checkout, 409> extends ErrorBody ? true : false = true;
export const limited: Json<Checkout, 429> extends ErrorBody ? true : false = true;
type Denied = Json<Responses<"changeOrderStatus">, 403>;
export const denied: Denied = { message: "Access denied: this needs the permission orders.update_status." };
type Missing = Json<Responses<"getProduct">, 404>;
export const missing: Missing = { message: "Product not found." };
export const unauthorized: Json<Responses<"listOrders">, 401> = { message: "Authentication required." };
export const retryAfter: Responses<"login">[429]["headers"]["Retry-After"] = 30;

// Query parameters: the named enum of sort orders.
type ListProducts = operations["listProducts"]["parameters"]["query"];
export const cheapestFirst: ListProducts = { sort: "price", page: 1, page_size: 50 };
export const page: Json<Responses<"listProducts">, 200> = { items: [], page: 1, page_size: 20, total: 0, total_is_exact: true, next_cursor: null };
export const nextPage: ListProducts = { sort: "price", cursor: "opaque, from next_cursor", page_size: 50 };

// Request bodies: the status change takes an order status, the key a scope.
export const ship: Schemas["OrderStatusChange"] = { status: "shipped", note: "DHL 123" };
export const key: Schemas["ApiKeyCreate"] = { label: "sync", scopes: ["read:product", "write:product"] };

// Variants: a product with options, its variants, generate, a checkout line by variant.
type Variant = Schemas["Variant"];
// (openapi-typescript types the fields with a default as present: send them.)
export const tshirt: Schemas["ProductCreate"] = {
  name: "T-shirt",
  description: "",
  sku: null,
  price_cents: 1500,
  stock: 4,
  active: true,
  category_id: null,
  tax_class: "standard",
  options: [{ name: "Size", values: ["S", "M", "L"] }],
};
export function sizes(product: Schemas["ProductDetail"]): string[] {
  return product.variants.map((v: Variant) => `${v.options["Size"] ?? "-"} ${v.price_cents} ${v.sku ?? "no SKU"}`);
}
export const generateBody: Schemas["Generate"] = { stock: 10, active: true };
export const noneMade: Json<Responses<"generateVariants">, 200> = { items: [], total: 0 };
export const tooMany: Json<Responses<"generateVariants">, 400> extends ErrorBody ? true : false = true;
export const sameValues: Json<Responses<"createVariant">, 409> extends ErrorBody ? true : false = true;
export const repriced: Schemas["VariantUpdate"] = { price_cents: 1800, compare_at_price_cents: null };
export const byVariant: Schemas["CheckoutItem"] = { variant_id: "0123456789abcdef01234567", quantity: 2 };
export function soldAs(order: Order): string[] {
  return order.items.map((line) => `${line.variant_id ?? "before variants"} ${JSON.stringify(line.options)}`);
}

// An image upload: multipart/form-data with the file and an optional alt text, as a browser
// or Node 18+ sends it with fetch; the product's detail lists its images, each with its url.
type Upload = NonNullable<operations["uploadProductImage"]["requestBody"]>["content"]["multipart/form-data"];
export function uploadForm(file: Blob, alt: Upload["alt"]): FormData {
  const form = new FormData();
  form.append("file", file, "photo.jpg");
  if (alt !== undefined) form.append("alt", alt);
  return form;
}
export const uploaded: Json<Responses<"uploadProductImage">, 201> extends Schemas["Image"] ? true : false = true;
export const notAnImage: Json<Responses<"uploadProductImage">, 415> extends ErrorBody ? true : false = true;
export const tooLarge: Json<Responses<"uploadProductImage">, 413> extends ErrorBody ? true : false = true;
type ImageWidth = NonNullable<operations["getImageFile"]["parameters"]["query"]>["w"];
export const thumbnail: ImageWidth = 320;
export function cover(product: Json<Responses<"getProduct">, 200>): string | null {
  const first = product.images[0];
  return first === undefined ? null : `${first.url}?w=640`;
}

// What the description forbids does not compile.
// @ts-expect-error: not one of the fixed widths
export const oddWidth: ImageWidth = 100;
// @ts-expect-error: the file is required
export const fileless: Upload = { alt: "no file" };
// @ts-expect-error: not an order status
export const lost: OrderStatus = "lost";
// @ts-expect-error: not a sort order
export const random: ListProducts = { sort: "random" };
// @ts-expect-error: an error body has a message
export const silent: ErrorBody = {};
// @ts-expect-error: number is always present
export const numberless: Pick<Order, "number"> = {};
// @ts-expect-error: a 204 has no body
export const deletedBody: Json<Responses<"deleteProduct">, 204> = { message: "gone" };

// Pricing (issue 26): the quote answers the breakdown an order also carries, to the minor unit.
type Quote = Json<Responses<"quoteBasket">, 200>;
export function sameAsOrder(quote: Quote, order: Order): boolean {
  const keys = ["subtotal_cents", "discount_cents", "shipping_cents", "tax_cents", "total_cents"] as const;
  return keys.every((k) => quote[k] === order[k]);
}
export function taxSummary(quote: Quote): string {
  return quote.tax_lines.map((t) => `${t.name} ${t.rate}%: ${t.amount_cents}`).join(", ");
}
export const quoteBody: Schemas["QuoteRequest"] = {
  items: [{ product_id: "0123456789abcdef01234567", quantity: 2 }],
  shipping_address: { country: "FR" },
  shipping_method_id: "0123456789abcdef01234567",
  discount_code: "SAVE10",
};
export const band: Schemas["ShippingMethodCreate"] = {
  name: "Colissimo",
  price_cents: 0,
  countries: ["FR", "BE"],
  weight_bands: [{ up_to_grams: 500, price_cents: 490 }],
};
export const vat: Schemas["TaxRateCreate"] = { country: "FR", rate: "20", name: "TVA" };
export const code: Schemas["DiscountCreate"] = { code: "SAVE10", kind: "percent", value: "10" };
export const noMethod: Order["shipping_method"] = null;
export const refusedCode: Json<Responses<"quoteBasket">, 400> = { message: "discount_code: expired: SAVE10 ended." };
// @ts-expect-error: not a kind of discount
export const bogo: Schemas["DiscountKind"] = "bogo";
// @ts-expect-error: a quote's address needs its country
export const nowhere: Schemas["QuoteRequest"]["shipping_address"] = {};
// @ts-expect-error: option values are text
export const numericSize: Variant["options"] = { Size: 3 };
