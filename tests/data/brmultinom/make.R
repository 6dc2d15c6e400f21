# Reference values for fastgen's multinomial Firth fit (brglm2::brmultinom, type =
# "AS_mean": the maximum of the Jeffreys-penalised likelihood) and for FLIC / FLAC
# (logistf's flic.R and flac.R transcribed with brglm2's binomial Firth fit and glm).
#
# Run once, from this directory:  Rscript make.R
# (Debian: apt-get install r-base-core r-cran-brglm2; recorded with R 4.2.2, brglm2 0.9.)
# Writes <name>_data.csv (y as 0-based codes, w, x1..xd) and <name>_coef.csv /
# <name>_se.csv (one row per non-reference class, or one row for binary fits; the
# intercept first, as R prints).  The tests read these files; CI needs no R.

suppressMessages(library(brglm2))
ctl <- brglmControl(epsilon = 1e-12, maxit = 1000)
options(digits = 17)

write_data <- function(name, y, w, X) {
  d <- data.frame(y = y, w = w, X)
  names(d) <- c("y", "w", paste0("x", seq_len(ncol(X))))
  write.csv(d, paste0(name, "_data.csv"), row.names = FALSE)
}

write_fit <- function(name, coefs, ses) {
  write.csv(format(coefs, digits = 17), paste0(name, "_coef.csv"), row.names = FALSE,
            quote = FALSE)
  write.csv(format(ses, digits = 17), paste0(name, "_se.csv"), row.names = FALSE,
            quote = FALSE)
}

multinomial <- function(name, y, w, X) {
  write_data(name, y, w, X)
  colnames(X) <- paste0("x", seq_len(ncol(X)))
  d <- data.frame(yf = factor(y), X)
  f <- brmultinom(reformulate(colnames(X), "yf"), weights = w, data = d, ref = 1,
                  type = "AS_mean", control = ctl)
  stopifnot(f$converged)
  B <- coef(f)
  se <- matrix(sqrt(diag(vcov(f))), nrow = nrow(B), byrow = TRUE)
  write_fit(name, B, se)
}

# 1. brglm2's own brmultinom example: alligators' food choice by size and lake
data("alligators", package = "brglm2")
Xa <- model.matrix(~ size + lake, alligators)[, -1]
multinomial("alligators", as.integer(alligators$foodchoice) - 1, alligators$freq, Xa)

# 2. complete separation, three classes: class by the sign pattern of x1 (no ML estimate)
set.seed(1)
n <- 40
x1 <- c(seq(-3, -0.5, length.out = 14), seq(-0.2, 0.2, length.out = 12),
        seq(0.5, 3, length.out = 14))
x2 <- round(rnorm(n), 3)
ysep <- c(rep(0, 14), rep(1, 12), rep(2, 14))
multinomial("separated3", ysep, rep(1, n), cbind(x1, x2))

# 3. quasi-complete separation, four classes, frequency weights: class 3 only where x1 > 1
set.seed(2)
n <- 60
X3 <- cbind(round(rnorm(n), 3), round(rnorm(n), 3))
eta <- cbind(0, 0.8 * X3[, 2], -0.5 * X3[, 1], 0)
P <- exp(eta) / rowSums(exp(eta))
yq <- apply(P, 1, function(p) sample(0:3, 1, prob = p))
yq[X3[, 1] > 1] <- 3
yq[yq == 3 & X3[, 1] <= 1] <- 0
X3[1, 1] <- 1; yq[1] <- 0 # a boundary point shared by classes 0 and 3
multinomial("quasi4", yq, sample(1:3, n, replace = TRUE), X3)

# 4. FLIC and FLAC, binary: logistf's flic.R / flac.R steps
binary <- function(name, y, w, X) {
  write_data(name, y, w, X)
  colnames(X) <- paste0("x", seq_len(ncol(X)))
  d <- data.frame(y = y, X)
  firth <- glm(y ~ ., family = binomial("logit"), data = d, weights = w,
               method = "brglmFit", type = "AS_mean", control = ctl)
  Xt <- model.matrix(firth)
  b <- coef(firth)
  pf <- as.vector(plogis(Xt %*% b))
  Wf <- w * pf * (1 - pf)
  Inf_f <- t(Xt) %*% (Wf * Xt)
  h <- Wf * rowSums((Xt %*% solve(Inf_f)) * Xt) # Firth's hat diagonal
  # FLIC: the ML intercept with the Firth slopes' linear predictor as offset
  lp <- as.vector(Xt[, -1, drop = FALSE] %*% b[-1])
  ic <- glm(y ~ 1, family = binomial("logit"), offset = lp, weights = w,
            control = glm.control(epsilon = 1e-14, maxit = 100))
  pic <- fitted(ic)
  Wi <- w * pic * (1 - pic)
  se0 <- sqrt(solve(t(Xt) %*% (Wi * Xt))[1, 1])
  flic <- c(coef(ic), b[-1])
  flic_se <- c(se0, sqrt(diag(solve(Inf_f)))[-1])
  flic_p0 <- summary(ic)$coefficients[1, "Pr(>|z|)"]
  # FLAC: ML on the augmented data with the pseudo-observation indicator g
  n <- length(y)
  da <- data.frame(y = c(y, y, 1 - y), rbind(X, X, X), g = rep(c(0, 1), c(n, 2 * n)))
  wa <- c(w, h / 2, h / 2)
  fa <- glm(y ~ ., family = binomial("logit"), data = da, weights = wa,
            control = glm.control(epsilon = 1e-14, maxit = 100))
  k <- seq_len(ncol(Xt))
  flac <- coef(fa)[k]
  flac_se <- sqrt(diag(vcov(fa)))[k]
  write_fit(paste0(name, "_flic"), rbind(flic), rbind(flic_se))
  write_fit(paste0(name, "_flac"), rbind(flac), rbind(flac_se))
  write_fit(paste0(name, "_firth"), rbind(b), rbind(sqrt(diag(solve(Inf_f)))))
  write.csv(data.frame(flic_intercept_p = format(flic_p0, digits = 17)),
            paste0(name, "_flic_p.csv"), row.names = FALSE, quote = FALSE)
}

# rare events: about 5 % ones, three covariates, frequency weights
set.seed(3)
n <- 300
Xr <- cbind(round(rnorm(n), 3), round(rnorm(n), 3), rbinom(n, 1, 0.3))
yr <- rbinom(n, 1, plogis(-3.2 + 0.8 * Xr[, 1] - 0.5 * Xr[, 2] + 0.7 * Xr[, 3]))
binary("rare", yr, sample(1:2, n, replace = TRUE), Xr)

# separated: y = 1 exactly where x1 > 0.4
set.seed(4)
n <- 50
Xs <- cbind(round(runif(n, -1, 1), 3), round(rnorm(n), 3))
binary("separated2", as.integer(Xs[, 1] > 0.4), rep(1, n), Xs)
