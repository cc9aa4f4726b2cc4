-- CreateTable
CREATE TABLE "credits" (
    "event_id" TEXT NOT NULL,
    "customer" TEXT NOT NULL,
    "amount" INTEGER NOT NULL,
    "txid" BIGINT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "credits_pkey" PRIMARY KEY ("event_id")
);

-- CreateTable
CREATE TABLE "balances" (
    "customer" TEXT NOT NULL,
    "amount" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "balances_pkey" PRIMARY KEY ("customer")
);
